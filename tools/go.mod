module memsvc.dev/memsvc/tools

go 1.26
