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
	// Namespace is the namespace the script records into.
	Namespace string
}

// InstallHook writes the hook helper script and the example configuration
// into <target>/.<agent>/hooks/. It checks both targets, and the two
// directories above them, before writing anything: a symlink is refused
// even with Force, an existing file without it. Without Force files are
// created exclusively; with it they are replaced by rename, so a file is
// never written through a link. It never touches the agent's settings.
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
	p := hooks.Params{Agent: string(o.Agent), AgentName: o.Agent.Name(), ServerURL: o.ServerURL, Namespace: ns, ScriptPath: inst.Script}
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
	return inst, nil
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
