package main

import "syscall"

// childAttr makes the kernel kill a child when the driver dies, even by
// SIGKILL, so no server outlives a run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
