// Package cputime tells benchmarks how much CPU time the process has
// used, so that they can report work as well as wall time on a machine
// that other jobs share.
package cputime
