package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// machine describes where the numbers were measured.
type machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`
	Memory string `json:"memory"`
}

func readMachine() machine {
	m := machine{CPU: "unknown", Cores: runtime.NumCPU(), Kernel: "unknown", Go: runtime.Version(), Memory: "unknown"}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(rest); len(f) == 2 && f[1] == "kB" {
					if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
						m.Memory = strconv.FormatFloat(kb/(1<<20), 'f', 1, 64) + " GiB"
					}
				}
				break
			}
		}
	}
	return m
}

// loadAvg is the first three fields of /proc/loadavg (1, 5 and 15 minute
// load averages).
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// memBandwidth estimates how fast this machine reads memory, in bytes per
// second: every core sums its share of a 256 MiB buffer, best of five
// passes. It is the yardstick for the vector scan.
func memBandwidth() float64 {
	const size = 256 << 20
	buf := make([]uint64, size/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	workers := runtime.GOMAXPROCS(0)
	sums := make([]uint64, workers)
	best := time.Duration(0)
	for range 5 {
		start := time.Now()
		var wg sync.WaitGroup
		for w := range workers {
			part := buf[w*len(buf)/workers : (w+1)*len(buf)/workers]
			wg.Go(func() {
				var a, b, c, d uint64
				for i := 0; i+4 <= len(part); i += 4 {
					a += part[i]
					b += part[i+1]
					c += part[i+2]
					d += part[i+3]
				}
				sums[w] += a + b + c + d
			})
		}
		wg.Wait()
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	runtime.KeepAlive(sums)
	return float64(size) / best.Seconds()
}
