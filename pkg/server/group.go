package server

// actor is one component of a running server, as in oklog/run: execute
// runs it and blocks until it ends; interrupt makes execute return. An
// interrupt must not block (start a drain in the background and let
// execute wait for it), and may be called after execute has returned.
type actor struct {
	name      string
	execute   func() error
	interrupt func(error)
}

// group runs actors together and stops them in an explicit order. Actors
// are added in stages. When any actor returns, the group interrupts the
// stages from the last added to the first; every actor of a stage is
// interrupted at once (they stop side by side, within the same deadline),
// and the stage before is interrupted only once all of them have returned.
// So a stage added first, which the later ones rely on, stops last.
//
// This is oklog/run's group with one addition, the stage order; the whole
// of it is small enough to keep rather than import.
type group struct {
	stages [][]actor
}

// stage adds actors that stop together, before every stage added earlier.
func (g *group) stage(actors ...actor) {
	g.stages = append(g.stages, actors)
}

// run starts every actor, waits for the first to return, stops the rest
// stage by stage, and returns the first actor's error (nil when it ended
// cleanly, as the actor watching for a shutdown signal does).
func (g *group) run() error {
	type result struct {
		stage, index int
		err          error
	}
	total := 0
	for _, st := range g.stages {
		total += len(st)
	}
	if total == 0 {
		return nil
	}
	results := make(chan result, total)
	running := make([][]bool, len(g.stages))
	for s, st := range g.stages {
		running[s] = make([]bool, len(st))
		for i, a := range st {
			running[s][i] = true
			go func() { results <- result{s, i, a.execute()} }()
		}
	}
	first := <-results
	running[first.stage][first.index] = false
	for s := len(g.stages) - 1; s >= 0; s-- {
		for _, a := range g.stages[s] {
			a.interrupt(first.err)
		}
		for stageRunning(running[s]) {
			r := <-results
			running[r.stage][r.index] = false
		}
	}
	return first.err
}

func stageRunning(running []bool) bool {
	for _, r := range running {
		if r {
			return true
		}
	}
	return false
}
