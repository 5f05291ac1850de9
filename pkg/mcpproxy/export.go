package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"memsvc.dev/memsvc/pkg/memory"
)

// export writes an archive to a new file in the proxy's export directory
// (Options.ExportDir), on the machine the proxy runs on. The path rules
// are checked before the server is called; the file is created through an
// os.Root of the directory, exclusively (never overwriting, never
// following a symbolic link out of it, mode 0600), the archive streams
// into it, and a failed export leaves no file.
// exportResult answers export: the archive's metadata and where it is.
type exportResult struct {
	ArchiveID   string `json:"archive_id"`
	SizeBytes   uint64 `json:"size_bytes"`
	RecordCount uint32 `json:"record_count"`
	Checksum    string `json:"checksum"`
	// Path is the absolute path of the file written.
	Path string `json:"path"`
}

func (p *Proxy) export(ctx context.Context, a args) (*exportResult, error) {
	raw, _, err := a.str("output_path")
	if err != nil {
		return nil, err
	}
	root, name, err := p.exportTarget(raw)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	req := memory.DefaultExportRequest()
	if req.Format, err = a.choice("format", req.Format, memory.ExportFormats()); err != nil {
		return nil, err
	}
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

	path := filepath.Join(root.Name(), name)
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, p.createError(raw, path, err)
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
		if rmErr := root.Remove(name); rmErr != nil {
			p.log.Error("remove partial export", "path", path, "err", rmErr)
		}
		if w.err != nil {
			return nil, &localError{fmt.Sprintf("Writing the archive to %s failed: %v. The partial file was removed; free some space or choose another name, then call again.", path, w.err)}
		}
		return nil, err
	}

	return &exportResult{ArchiveID: resp.ArchiveID, SizeBytes: uint64(w.n), RecordCount: resp.RecordCount, Checksum: resp.Checksum, Path: path}, nil
}

// exportTarget applies the path rules to output_path and returns the
// export directory, opened as an os.Root, and the name to create in it.
// Only names inside the directory are accepted: a relative name without
// "..", or an absolute path that lies inside the directory. The root keeps
// symbolic links from leading anywhere else while the file is created. The
// directory is made (0700) when it does not exist yet.
func (p *Proxy) exportTarget(raw string) (*os.Root, string, error) {
	dir := p.opts.ExportDir
	if dir == "" {
		return nil, "", &localError{"This MCP server has no export directory, so it cannot write archives. Start it with --export-dir DIR (or with HOME set, for the default). Nothing was exported."}
	}
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return nil, "", badArg("output_path", "required: the name of a new archive file in the export directory %s, e.g. memsvc-backup.cma", dir)
	case strings.ContainsRune(s, 0):
		return nil, "", badArg("output_path", "must not contain a NUL character")
	case strings.HasSuffix(filepath.ToSlash(s), "/") || filepath.Base(s) == ".":
		return nil, "", badArg("output_path", "%s names a directory; give the name of a new file, e.g. memsvc-backup.cma", memory.Quote(raw))
	}
	name := s
	if filepath.IsAbs(s) || strings.HasPrefix(s, "~") {
		rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(s))
		if strings.HasPrefix(s, "~") || err != nil || !filepath.IsLocal(rel) {
			return nil, "", badArg("output_path", "%s is outside the export directory %s; export writes only there: give a file name such as memsvc-backup.cma (the proxy's --export-dir flag chooses the directory)", memory.Quote(raw), dir)
		}
		name = rel
	}
	if !filepath.IsLocal(name) {
		return nil, "", badArg("output_path", "%s leaves the export directory %s (\"..\" is not allowed); give a file name such as memsvc-backup.cma", memory.Quote(raw), dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", &localError{fmt.Sprintf("Cannot create the export directory %s: %v. Create it, or start the MCP server with another --export-dir. Nothing was exported.", dir, err)}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", &localError{fmt.Sprintf("Cannot open the export directory %s: %v. Nothing was exported.", dir, err)}
	}
	if fi, err := root.Lstat(name); err == nil {
		_ = root.Close()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, "", badArg("output_path", "%s is a symbolic link in the export directory %s; export never follows links: choose a new file name", memory.Quote(name), dir)
		case fi.IsDir():
			return nil, "", badArg("output_path", "%s is a directory in the export directory %s; give the name of a new file", memory.Quote(name), dir)
		default:
			return nil, "", badArg("output_path", "%s already exists in the export directory %s; export never overwrites: choose a new file name", memory.Quote(name), dir)
		}
	}
	return root, name, nil
}

// createError explains why the archive file could not be created in the
// export directory.
func (p *Proxy) createError(raw, path string, err error) error {
	dir := p.opts.ExportDir
	switch {
	case errors.Is(err, fs.ErrExist):
		// Created by someone else since the check.
		return badArg("output_path", "%s already exists; export never overwrites: choose a new file name", path)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return badArg("output_path", "%s names a directory that does not exist in the export directory %s; create it first or give a plain file name", memory.Quote(raw), dir)
	case strings.Contains(err.Error(), "escapes from parent"):
		return badArg("output_path", "%s leads out of the export directory %s through a symbolic link; export writes only inside it", memory.Quote(raw), dir)
	}
	return &localError{fmt.Sprintf("Cannot create the archive file %s: %v. Choose a name this MCP server may write in %s. Nothing was exported.", path, err, dir)}
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
