// Command modproxy writes a file-based Go module proxy (for
// GOPROXY=file://DIR) holding the repository's modules at one test
// version, made from the working tree, and the third-party module
// versions their go.sum files name, copied from the module cache, so that
// a build against it needs no network. .ci/release-check uses it.
//
// Usage, from the repository root:
//
//	go run .ci/modproxy/main.go -version v0.1.0 -out DIR
//
// A module's files are the ones git tracks or would track (untracked files
// that no .gitignore excludes), as they are in the working tree, less the
// directories of other modules nested in it and VCS directories. As the go
// command does when it makes a module zip from a repository, a sub-module
// without a LICENSE of its own gets the repository root's LICENSE.
//
// It uses the standard library only, so that no module of the repository
// takes a dependency for it.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
)

// module is one module of the repository: its path and its directory
// relative to the repository root ("." for the root).
type module struct {
	path string
	dir  string
}

func main() {
	version := flag.String("version", "", "the version to give every module of the repository, such as v0.1.0")
	out := flag.String("out", "", "the directory to write the proxy into")
	flag.Parse()
	if *version == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run .ci/modproxy/main.go -version vX.Y.Z -out DIR")
		os.Exit(2)
	}
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(version, out string) error {
	if !strings.HasPrefix(version, "v") || strings.Count(version, ".") != 2 {
		return fmt.Errorf("version %q: want vX.Y.Z", version)
	}
	files, err := repoFiles()
	if err != nil {
		return err
	}
	mods, err := findModules(files)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	ours := map[string]bool{}
	for _, m := range mods {
		ours[m.path] = true
		if err := writeModule(out, m, mods, files, version, now); err != nil {
			return fmt.Errorf("module %s: %w", m.path, err)
		}
	}
	return copyThirdParty(out, mods, ours)
}

// repoFiles lists the files of the working tree that git tracks or would
// track, as slash-separated paths relative to the root.
func repoFiles() ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(string(b), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		fi, err := os.Lstat(filepath.FromSlash(f))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// findModules returns the modules whose go.mod files are among files.
func findModules(files []string) ([]module, error) {
	var mods []module
	for _, f := range files {
		if path.Base(f) != "go.mod" {
			continue
		}
		p, err := modulePath(f)
		if err != nil {
			return nil, err
		}
		mods = append(mods, module{path: p, dir: path.Dir(f)})
	}
	if len(mods) == 0 {
		return nil, errors.New("no go.mod among the repository's files")
	}
	return mods, nil
}

// modulePath reads the module path from the module directive of a go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(filepath.FromSlash(gomod))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module directive", gomod)
}

// inDir reports whether the file f is in the directory dir ("." is the
// root, which holds every file).
func inDir(f, dir string) bool {
	return dir == "." || strings.HasPrefix(f, dir+"/")
}

// moduleFiles returns the files of m: those in its directory, less those
// in the directory of another module nested in it and in VCS directories.
func moduleFiles(m module, mods []module, files []string) []string {
	var list []string
next:
	for _, f := range files {
		if !inDir(f, m.dir) {
			continue
		}
		for _, o := range mods {
			if o.dir != m.dir && inDir(o.dir+"/", m.dir) && inDir(f, o.dir) {
				continue next
			}
		}
		for _, elem := range strings.Split(f, "/") {
			switch elem {
			case ".git", ".hg", ".svn", ".bzr":
				continue next
			}
		}
		list = append(list, f)
	}
	return list
}

// writeModule writes list, .info, .mod and .zip of m at version.
func writeModule(out string, m module, mods []module, files []string, version string, now time.Time) error {
	dir, err := versionDir(out, m.path)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.FromSlash(path.Join(m.dir, "go.mod")))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	prefix := m.path + "@" + version + "/"
	hasLicense := false
	for _, f := range moduleFiles(m, mods, files) {
		rel := f
		if m.dir != "." {
			rel = strings.TrimPrefix(f, m.dir+"/")
		}
		if rel == "LICENSE" {
			hasLicense = true
		}
		if err := addFile(zw, prefix+rel, f); err != nil {
			return err
		}
	}
	if !hasLicense && m.dir != "." {
		if _, err := os.Stat("LICENSE"); err == nil {
			if err := addFile(zw, prefix+"LICENSE", "LICENSE"); err != nil {
				return err
			}
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	base := filepath.Join(dir, escape(version))
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, now})
	for name, data := range map[string][]byte{".info": info, ".mod": gomod, ".zip": buf.Bytes()} {
		if err := os.WriteFile(base+name, data, 0o644); err != nil {
			return err
		}
	}
	return addToList(dir, version)
}

// addFile adds the file src of the working tree to zw as name.
func addFile(zw *zip.Writer, name, src string) error {
	f, err := os.Open(filepath.FromSlash(src))
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}

// copyThirdParty copies into the proxy, from the module cache's download
// directory, every module version that the go.sum files of mods name,
// other than the repository's own modules: its .mod, .info and .zip,
// those of them the cache has. go.sum names more than a build reads (the
// go.mod files of a pruned module graph), and a build downloads the zip
// only of a module whose packages it compiles: what the cache lacks was
// not needed by the builds and tests that filled it, and a build against
// the proxy that does need it fails naming it.
func copyThirdParty(out string, mods []module, ours map[string]bool) error {
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	download := filepath.Join(strings.TrimSpace(string(cache)), "cache", "download")
	need := map[[2]string]bool{}
	for _, m := range mods {
		sums, err := os.Open(filepath.FromSlash(path.Join(m.dir, "go.sum")))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(sums)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 || ours[fields[0]] {
				continue
			}
			need[[2]string{fields[0], strings.TrimSuffix(fields[1], "/go.mod")}] = true
		}
		sums.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	for mv := range need {
		src := filepath.Join(download, escape(mv[0]), "@v")
		if _, err := os.Stat(filepath.Join(src, escape(mv[1])+".mod")); errors.Is(err, os.ErrNotExist) {
			continue
		}
		dst, err := versionDir(out, mv[0])
		if err != nil {
			return err
		}
		for _, ext := range []string{".mod", ".info", ".zip"} {
			name := escape(mv[1]) + ext
			err := copyFile(filepath.Join(dst, name), filepath.Join(src, name))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s@%s: %w", mv[0], mv[1], err)
			}
		}
		if err := addToList(dst, mv[1]); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(dst, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// versionDir makes and returns the @v directory of module path p.
func versionDir(out, p string) (string, error) {
	dir := filepath.Join(out, filepath.FromSlash(escape(p)), "@v")
	return dir, os.MkdirAll(dir, 0o755)
}

// addToList adds version to the list file of the @v directory dir.
func addToList(dir, version string) error {
	f, err := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, version); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// escape writes each upper-case letter of s as '!' and its lower case, as
// module proxies and the module cache spell paths and versions.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
