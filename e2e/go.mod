module memsvc.dev/memsvc/e2e

go 1.26

require memsvc.dev/memsvc v0.0.0

replace memsvc.dev/memsvc => ../
