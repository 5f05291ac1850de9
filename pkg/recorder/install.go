package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"memsvc.dev/memsvc/hooks"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// ErrInstallRefused matches every refusal of InstallHook to write a file.
var ErrInstallRefused = errors.New("hook install refused")

// InstallOptions configure InstallHook.
type InstallOptions struct {
	Agent     Agent
	ServerURL string // baked into the script
	TargetDir string // the project directory; "" is the working directory
	Force     bool   // overwrite existing files (never symlinks)
	// Namespace is baked into the script as MEMSVC_NAMESPACE; ""
	// derives it from the project directory's name (ProjectNamespace).
	Namespace string
}

// Installed names the files InstallHook wrote.
type Installed struct {
	Script  string
	Example string
	// Registration is the file the agent reads its hooks from when it is a
	// file of hooks alone: .codex/hooks.json for Codex; "" for Claude Code,
	// whose hooks live in its general settings.
	Registration string
	// RegistrationWritten reports that InstallHook created Registration
	// (with the example's content); false means it existed and was left
	// alone.
	RegistrationWritten bool
	// Command is what the registration runs.
	Command string
	// Namespace is the namespace the script records into.
	Namespace string
}

// codexRegistration is Codex's project hook file, relative to the target.
const codexRegistration = "hooks.json"

// InstallHook writes the hook helper script and the example configuration
// into <target>/.<agent>/hooks/. It checks both targets, and the two
// directories above them, before writing anything: a symlink is refused
// even with Force, an existing file without it. Without Force files are
// created exclusively; with it they are replaced by rename, so a file is
// never written through a link. It never changes the agent's settings: for
// Codex, whose hooks have a file of their own, it creates .codex/hooks.json
// with the example's content when there is none, and leaves an existing one
// alone (even with Force).
//
// The registered command finds the script relative to the project (see
// hooks.Command), so a registration checked into the repository works for
// everyone who clones it.
func InstallHook(o InstallOptions) (Installed, error) {
	var inst Installed
	if _, err := client.ParseBaseURL(o.ServerURL); err != nil {
		return inst, err
	}
	target := o.TargetDir
	if target == "" {
		target = "."
	}
	target, err := filepath.Abs(target)
	if err != nil {
		return inst, fmt.Errorf("target directory: %w", err)
	}
	if fi, err := os.Stat(target); err != nil {
		return inst, fmt.Errorf("target directory: %w", err)
	} else if !fi.IsDir() {
		return inst, fmt.Errorf("target directory %s: not a directory", target)
	}
	ns := o.Namespace
	if ns == "" {
		if ns, err = ProjectNamespace(target); err != nil {
			return inst, err
		}
	} else if err := memory.ValidateNamespace(ns); err != nil {
		return inst, err
	}
	agentDir := filepath.Join(target, o.Agent.HiddenDir())
	dir := filepath.Join(agentDir, "hooks")
	inst = Installed{Script: filepath.Join(dir, hooks.ScriptName(string(o.Agent))), Example: filepath.Join(dir, hooks.ExampleName), Namespace: ns}
	if o.Agent == Codex {
		inst.Registration = filepath.Join(agentDir, codexRegistration)
	}
	if inst.Command, err = hooks.Command(string(o.Agent), workTreeSub(target)); err != nil {
		return inst, err
	}
	p := hooks.Params{Agent: string(o.Agent), AgentName: o.Agent.Name(), ServerURL: o.ServerURL, Namespace: ns, Command: inst.Command}
	script, err := hooks.Script(p)
	if err != nil {
		return inst, err
	}
	example, err := hooks.Example(p)
	if err != nil {
		return inst, err
	}
	// Every file operation below goes through a Root at the target, so no
	// path can resolve outside it, whatever is swapped in while installing.
	// The directories between the target and the files are checked too: a
	// symlinked .claude or .claude/hooks would carry the files, and the
	// rename that --force uses, to wherever the link points.
	root, err := os.OpenRoot(target)
	if err != nil {
		return inst, fmt.Errorf("target directory: %w", err)
	}
	defer root.Close()
	rel := func(path string) string {
		r, _ := filepath.Rel(target, path) // path is inside target
		return r
	}
	hookDirs := []string{agentDir, dir}
	for _, d := range hookDirs {
		if err := checkHookDir(root, rel(d), d); err != nil {
			return inst, err
		}
	}
	for _, path := range []string{inst.Script, inst.Example} {
		fi, err := root.Lstat(rel(path))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return inst, fmt.Errorf("check %s: %w", path, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return inst, fmt.Errorf("%w: %s is a symlink; hook files are never written through symlinks, even with --force (remove the link first)", ErrInstallRefused, path)
		case !fi.Mode().IsRegular():
			return inst, fmt.Errorf("%w: %s exists and is not a regular file", ErrInstallRefused, path)
		case !o.Force:
			return inst, fmt.Errorf("%w: %s already exists; pass --force to overwrite it (nothing was written)", ErrInstallRefused, path)
		}
	}
	for _, d := range hookDirs {
		if err := makeHookDir(root, rel(d), d); err != nil {
			return inst, err
		}
	}
	if err := writeHookFile(root, rel(inst.Script), inst.Script, script, 0o755, o.Force); err != nil {
		return inst, err
	}
	if err := writeHookFile(root, rel(inst.Example), inst.Example, example, 0o644, o.Force); err != nil {
		if !o.Force {
			_ = root.Remove(rel(inst.Script)) // all or nothing
		}
		return inst, err
	}
	if inst.Registration != "" {
		written, err := createIfAbsent(root, rel(inst.Registration), inst.Registration, example)
		if err != nil {
			return inst, err
		}
		inst.RegistrationWritten = written
	}
	return inst, nil
}

// createIfAbsent creates the file with data unless something (a file, a
// link, anything) is already there; it reports whether it wrote it.
func createIfAbsent(root *os.Root, name, path string, data []byte) (bool, error) {
	if _, err := root.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return false, fmt.Errorf("check %s: %w", path, err)
		}
		return false, nil
	}
	err := writeHookFile(root, name, path, data, 0o644, false)
	if errors.Is(err, ErrInstallRefused) {
		return false, nil // it appeared meanwhile: somebody else's now
	}
	return err == nil, err
}

// workTreeSub is dir relative to the top of the git work tree it is in
// (the nearest directory at or above it holding .git), or "" when dir is
// that top or in no work tree.
func workTreeSub(dir string) string {
	for top := dir; ; {
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			sub, err := filepath.Rel(top, dir)
			if err != nil || sub == "." {
				return ""
			}
			return sub
		}
		parent := filepath.Dir(top)
		if parent == top {
			return ""
		}
		top = parent
	}
}

// checkHookDir refuses a directory on the way to the hook files (name,
// relative to root; path, as the user knows it) that is a symlink or not a
// directory at all. A missing one is fine: InstallHook creates it.
func checkHookDir(root *os.Root, name, path string) error {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symlink; hook files are never written through a symlinked directory, even with --force "+
			"(replace the link with a real directory and run install-hook again)", ErrInstallRefused, path)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s exists and is not a directory; move it away and run install-hook again", ErrInstallRefused, path)
	}
	return nil
}

// makeHookDir creates the directory if it is missing (mkdir never follows
// a link in its last element) and then checks it again, so a symlink put
// in place after checkHookDir is still refused before any file is written.
func makeHookDir(root *os.Root, name, path string) error {
	if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create hook directory %s: %w", path, err)
	}
	return checkHookDir(root, name, path)
}

// writeHookFile creates the file exclusively, or with replace through a
// temp file and a rename (which replaces a directory entry, never following
// a link).
func writeHookFile(root *os.Root, name, path string, data []byte, perm fs.FileMode, replace bool) error {
	tmp := name
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if replace {
		tmp = name + ".tmp"
		_ = root.Remove(tmp)
	}
	f, err := root.OpenFile(tmp, flags, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s appeared while installing; pass --force to overwrite it", ErrInstallRefused, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // past the umask: the script must be executable
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && replace {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
