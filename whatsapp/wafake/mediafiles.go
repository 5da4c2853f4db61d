package wafake

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Media blobs on disk (statefile.go): a network with a state directory
// writes each blob once, to a file named by its SHA-256, when it is
// uploaded; network.json names the file of each path. A blob the host
// deleted keeps its file while a phone still keeps it for media retries.

// keepLocked writes blob to its file and records it as path's. A blob that
// cannot be written stays in memory only: this network serves it, a
// restarted one does not. s.mu must be held.
func (s *mediaStore) keepLocked(path string, blob []byte) {
	if s.dir == "" {
		return
	}
	name, err := writeBlob(s.dir, blob)
	if err != nil {
		return
	}
	if s.files == nil {
		s.files = map[string]string{}
	}
	s.files[path] = name
	s.changedLocked()
}

// readLocked reads the blob of path from its file, for a path an earlier
// network stored. s.mu must be held.
func (s *mediaStore) readLocked(path string) ([]byte, bool) {
	name, ok := s.files[path]
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	return b, err == nil
}

func (s *mediaStore) changedLocked() {
	if s.gen != nil {
		s.gen.Add(1)
	}
}

// writeBlob writes blob to dir under its SHA-256 (hex), unless a file of
// that name is already there, and returns the name.
func writeBlob(dir string, blob []byte) (string, error) {
	sum := sha256.Sum256(blob)
	name := hex.EncodeToString(sum[:])
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return name, nil
	}
	return name, writeFileAtomic(path, blob)
}

// collectMedia removes the blob files neither the host nor a phone's
// media retries name any more. Only at start and at Close, when no upload
// is under way: a blob is written before the world names it.
func (n *Network) collectMedia() {
	if n.media.dir == "" {
		return
	}
	keep := map[string]bool{}
	n.media.mu.Lock()
	for _, name := range n.media.files {
		keep[name] = true
	}
	n.media.mu.Unlock()
	n.retries.mu.Lock()
	for _, m := range n.retries.sent {
		sum := sha256.Sum256(m.blob)
		keep[hex.EncodeToString(sum[:])] = true
	}
	n.retries.mu.Unlock()
	entries, err := os.ReadDir(n.media.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !keep[e.Name()] {
			os.Remove(filepath.Join(n.media.dir, e.Name()))
		}
	}
}
