package main

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestCPUTimeCountsBelowATick: a child that has run on a CPU for a
// while reads the same CPU time from its threads' run times (in
// nanoseconds) as from the clock ticks of its stat, to within a few
// ticks, and a child that has barely run (far less than a tick) reads
// some CPU time once it has been switched out.
func TestCPUTimeCountsBelowATick(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	kids := &children{}
	t.Cleanup(kids.killAll)
	start := func(script string) *process {
		p, err := startProcess(kids, exec.Command(sh, "-c", script), nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	idle := start("exec sleep 30")
	var d time.Duration
	for end := time.Now().Add(5 * time.Second); d == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if d, err = idle.cpuTime(); err != nil {
			t.Fatal(err)
		}
	}
	if d <= 0 {
		t.Errorf("idle child: cpuTime %v after 5 s; want above zero", d)
	}

	// Burn about half a second of CPU in the shell, then sleep.
	busy := start(`i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; exec sleep 30`)
	deadline := time.Now().Add(20 * time.Second)
	var ticks time.Duration
	for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ticks, err = busy.statCPUTime(); err != nil {
			t.Fatal(err)
		}
		if ticks >= 200*time.Millisecond {
			break
		}
	}
	if ticks < 200*time.Millisecond {
		t.Fatalf("the busy child used %v of CPU in 20 s, want 200 ms", ticks)
	}
	run, err := busy.threadRunTime()
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := busy.statCPUTime(); run < ticks-30*time.Millisecond || run > after+200*time.Millisecond {
		t.Errorf("thread run time %v, clock ticks %v to %v", run, ticks, after)
	}
}
