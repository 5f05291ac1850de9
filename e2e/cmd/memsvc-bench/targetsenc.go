package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// The encrypted section: what store encryption costs an embedded CLI
// command, which opens the data directory itself (deriving the store key,
// loading the in-memory state) and closes it again.

// cliTimeout bounds one embedded CLI command.
const cliTimeout = 5 * time.Minute

// encPassphrase is the store passphrase of the encrypted directory.
const encPassphrase = "memsvc-bench store passphrase"

// envEncrypted turns store encryption on.
const envEncrypted = "MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=" + encPassphrase

// encryptedResult is embedded CLI commands timed over a plaintext and an
// encrypted data directory of the same records.
type encryptedResult struct {
	Records  int        `json:"records"`
	Runs     int        `json:"runs"` // of each command on each directory
	Commands []cliPoint `json:"commands"`
}

// cliPoint is one embedded command on both directories: wall time from
// exec to exit, and the CPU time (user and system) the process used.
type cliPoint struct {
	Command        string  `json:"command"`
	Plain          row     `json:"plaintext"`
	Encrypted      row     `json:"encrypted"`
	PlainCPUms     float64 `json:"plaintext_cpu_p50_ms"`
	EncryptedCPUms float64 `json:"encrypted_cpu_p50_ms"`
	Ratio          float64 `json:"ratio"` // Encrypted over Plain wall p50
}

// cliCommand is an embedded command of the section; args returns its
// arguments (after the data directory) for run i.
type cliCommand struct {
	name string
	args func(i int) []string
}

// encDir is one data directory of the section.
type encDir struct {
	dir, home string
	env       []string
	wall, cpu []timings // by command
}

// targetEncrypted builds the two directories, each through a server that
// is stopped once it holds the records, then runs each command
// sc.cliRuns times on each, alternating which directory goes first.
func (b *bench) targetEncrypted(ctx context.Context) error {
	sc := b.cfg.targets
	qs := queries(b.cfg.seed+10, sc.cliRuns)
	cmds := []cliCommand{
		{"stats", func(int) []string { return []string{"stats"} }},
		{"recall <query>", func(i int) []string { return []string{"recall", qs[i%len(qs)]} }},
	}
	plain, err := b.encryptedDir(ctx, "plaintext", cmds)
	if err != nil {
		return err
	}
	defer plain.remove()
	sealed, err := b.encryptedDir(ctx, "encrypted", cmds, envEncrypted)
	if err != nil {
		return err
	}
	defer sealed.remove()

	b.logf("embedded CLI commands over %s records, %d runs each, plaintext and encrypted alternating", group(sc.encrypted), sc.cliRuns)
	for i := range sc.cliRuns {
		order := []*encDir{plain, sealed}
		if i%2 == 1 {
			order[0], order[1] = sealed, plain
		}
		for c, cmd := range cmds {
			for _, d := range order {
				if err := b.runCLI(ctx, d, c, cmd.args(i)); err != nil {
					return fmt.Errorf("%s: %w", cmd.name, err)
				}
			}
		}
	}
	// After the runs: a memsvc before 88eb0a8 deletes the sealed index
	// snapshot in a start without the passphrase.
	if err := b.checkSealed(ctx, sealed); err != nil {
		return err
	}
	res := &encryptedResult{Records: sc.encrypted, Runs: sc.cliRuns}
	for c, cmd := range cmds {
		p := cliPoint{Command: "memsvc " + cmd.name,
			Plain:     plain.wall[c].row(cmd.name, sc.encrypted, "", ""),
			Encrypted: sealed.wall[c].row(cmd.name, sc.encrypted, "", "")}
		p.PlainCPUms = plain.cpu[c].row("", 0, "", "").P50ms
		p.EncryptedCPUms = sealed.cpu[c].row("", 0, "", "").P50ms
		if p.Plain.P50ms > 0 {
			p.Ratio = p.Encrypted.P50ms / p.Plain.P50ms
		}
		res.Commands = append(res.Commands, p)
		b.logf("%s: p50 %s ms encrypted, %s ms plaintext (%.2f×); CPU %s / %s ms", p.Command,
			msf(p.Encrypted.P50ms), msf(p.Plain.P50ms), p.Ratio, msf(p.EncryptedCPUms), msf(p.PlainCPUms))
	}
	b.targets.Encrypted = res
	return nil
}

// encryptedDir loads sc.encrypted records into a new data directory
// through a server started with env, and stops the server.
func (b *bench) encryptedDir(ctx context.Context, kind string, cmds []cliCommand, env ...string) (*encDir, error) {
	sc := b.cfg.targets
	t, err := b.newTargetServer(ctx, 4, env...)
	if err != nil {
		return nil, fmt.Errorf("%s directory: %w", kind, err)
	}
	b.logf("%s data directory", kind)
	// The same seed in both directories: the same records.
	if err := t.load(ctx, newCorpus(b.cfg.seed+9, 0), sc.encrypted, nil); err != nil {
		t.close()
		return nil, fmt.Errorf("%s directory: %w", kind, err)
	}
	if _, err := b.settle(ctx, t.srv.process); err != nil {
		t.close()
		return nil, err
	}
	if err := t.srv.stop(); err != nil {
		t.close()
		return nil, fmt.Errorf("%s directory: stop the server: %w", kind, err)
	}
	t.srv = nil
	return &encDir{dir: t.dir, home: t.home, env: env,
		wall: make([]timings, len(cmds)), cpu: make([]timings, len(cmds))}, nil
}

func (d *encDir) remove() {
	_ = os.RemoveAll(d.dir)
	_ = os.RemoveAll(d.home)
}

// runCLI runs `memsvc --data-dir DIR args...` on d and records its wall
// and CPU time under command c.
func (b *bench) runCLI(ctx context.Context, d *encDir, c int, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.cfg.memsvcBin, append([]string{"--data-dir", d.dir}, args...)...)
	cmd.Env = append([]string{"HOME=" + d.home, "PATH=" + os.Getenv("PATH")}, d.env...)
	cmd.SysProcAttr = childAttr()
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	s := time.Now()
	err := cmd.Run()
	wall := time.Since(s)
	if err != nil {
		return fmt.Errorf("memsvc %v: %w\n%s", quoteShort(fmt.Sprint(args)), err, tail(stderr.Bytes(), 4<<10))
	}
	d.wall[c].d = append(d.wall[c].d, wall)
	d.cpu[c].d = append(d.cpu[c].d, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	return nil
}

// checkSealed makes sure d's records are encrypted, so the section never
// compares two plaintext directories: without the passphrase, a command
// that loads the records must fail and say why.
func (b *bench) checkSealed(ctx context.Context, d *encDir) error {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.cfg.memsvcBin, "--data-dir", d.dir, "stats")
	cmd.Env = []string{"HOME=" + d.home, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = childAttr()
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return errors.New("the encrypted data directory opens without the passphrase: store encryption did not take effect")
	case !bytes.Contains(out, []byte("record is encrypted")):
		return fmt.Errorf("memsvc stats on the encrypted directory without the passphrase: %w, not because its records are encrypted:\n%s", err, tail(out, 4<<10))
	}
	return nil
}

// tail is the last n bytes of b.
func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// worst is the command of r with the highest ratio, or nil (r nil too).
func (r *encryptedResult) worst() *cliPoint {
	var w *cliPoint
	if r == nil {
		return nil
	}
	for i := range r.Commands {
		if w == nil || r.Commands[i].Ratio > w.Ratio {
			w = &r.Commands[i]
		}
	}
	return w
}
