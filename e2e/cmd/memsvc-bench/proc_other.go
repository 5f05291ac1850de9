//go:build !linux

package main

import "syscall"

// childAttr: outside Linux children are killed by the driver's own exit
// paths only.
func childAttr() *syscall.SysProcAttr { return nil }
