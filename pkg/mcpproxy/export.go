package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// export writes an archive to a new file on the proxy's machine. The path
// rules are checked before the server is called; the file is created
// exclusively (never overwriting, never following a symbolic link, mode
// 0600), the archive streams into it, and a failed export leaves no file.
func (p *Proxy) export(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	raw, _, err := a.str("output_path")
	if err != nil {
		return nil, err
	}
	path, err := p.exportPath(raw)
	if err != nil {
		return nil, err
	}
	format, err := a.choice("format", "cma", formatNames)
	if err != nil {
		return nil, err
	}
	req := memory.DefaultExportRequest()
	req.Format = format
	req.IncludeRawJournal = true
	if req.Encrypt, err = a.boolean("encrypt", false); err != nil {
		return nil, err
	}
	key, hasKey, err := a.str("encryption_key")
	if err != nil {
		return nil, err
	}
	switch {
	case req.Encrypt && (!hasKey || strings.TrimSpace(key) == ""):
		return nil, badArg("encryption_key", "required when encrypt is true: the passphrase that will be needed to import the archive")
	case !req.Encrypt && hasKey:
		return nil, badArg("encryption_key", "given while encrypt is false; set encrypt to true to encrypt the archive, or leave encryption_key out")
	case req.Encrypt:
		req.EncryptionKey = &key
	}
	if req.IncludeSealed, err = a.boolean("include_sealed", false); err != nil {
		return nil, err
	}
	if req.IncludeSecret, err = a.boolean("include_secret", false); err != nil {
		return nil, err
	}

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Created by someone else since the check.
			return nil, badArg("output_path", "%s already exists; export never overwrites: choose a new file name", path)
		}
		return nil, &localError{fmt.Sprintf("Cannot create the archive file %s: %v. Choose a path this MCP server may write to. Nothing was exported.", path, err)}
	}
	w := &fileWriter{f: f}
	resp, err := p.svc.Export(ctx, &req, w)
	if err == nil {
		if err = f.Sync(); err != nil {
			w.err = err
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err, w.err = cerr, cerr
	}
	if err != nil {
		rmErr := os.Remove(path)
		if rmErr != nil {
			p.log.Error("remove partial export", "path", path, "err", rmErr)
		}
		if w.err != nil {
			return nil, &localError{fmt.Sprintf("Writing the archive to %s failed: %v. The partial file was removed; free some space or choose another path, then call again.", path, w.err)}
		}
		return nil, err
	}

	meta, err := json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return mcp.NewToolResultText(fmt.Sprintf("%s\n\nArchive written to %s\nSize: %d bytes", meta, path, w.n)), nil
}

// exportPath applies the path rules and returns the absolute path to
// create, with its directory resolved to its real location.
func (p *Proxy) exportPath(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", badArg("output_path", "required: the path of a new archive file, e.g. /home/me/backups/memsvc.cma")
	case strings.HasPrefix(s, "~"):
		return "", badArg("output_path", "%q starts with ~, which is not expanded; give an absolute path such as /home/me/backups/memsvc.cma", raw)
	case strings.ContainsRune(s, 0):
		return "", badArg("output_path", "must not contain a NUL character")
	}
	for _, part := range strings.Split(filepath.ToSlash(s), "/") {
		if part == ".." {
			return "", badArg("output_path", "%q contains \"..\", which is not allowed; give the path without it", raw)
		}
	}
	if strings.HasSuffix(filepath.ToSlash(s), "/") || filepath.Base(s) == "." {
		return "", badArg("output_path", "%q names a directory; give the path of a new file inside it, e.g. %s", raw, filepath.Join(s, "memsvc.cma"))
	}
	abs := s
	if !filepath.IsAbs(abs) {
		wd := p.opts.WorkDir
		if wd == "" {
			var err error
			if wd, err = os.Getwd(); err != nil {
				return "", &localError{fmt.Sprintf("Cannot resolve the relative path %q: the MCP server's working directory is unknown (%v). Give an absolute path.", raw, err)}
			}
		}
		abs = filepath.Join(wd, abs)
	}
	abs = filepath.Clean(abs)
	dir, base := filepath.Dir(abs), filepath.Base(abs)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", badArg("output_path", "the directory %s does not exist; create it first or choose an existing directory", dir)
	case err != nil:
		return "", badArg("output_path", "cannot use the directory %s: %v", dir, err)
	case !st.IsDir():
		return "", badArg("output_path", "%s is not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", badArg("output_path", "cannot resolve the directory %s: %v", dir, err)
	}
	target := filepath.Join(real, base)
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "", badArg("output_path", "%s is a symbolic link; export never follows links: choose a new file name", target)
	case err == nil && fi.IsDir():
		return "", badArg("output_path", "%s is a directory; give the path of a new file inside it", target)
	case err == nil:
		return "", badArg("output_path", "%s already exists; export never overwrites: choose a new file name", target)
	case !errors.Is(err, fs.ErrNotExist):
		return "", badArg("output_path", "cannot check %s: %v", target, err)
	}
	return target, nil
}

// fileWriter counts the bytes written and keeps the first write error,
// so a failed export can tell a full disk from a failed server.
type fileWriter struct {
	f   *os.File
	n   int64
	err error
}

var _ io.Writer = (*fileWriter)(nil)

func (w *fileWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.n += int64(n)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}
