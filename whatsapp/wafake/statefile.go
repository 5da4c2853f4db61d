package wafake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/datadir"
)

// The world on disk: with Options.StateDir the network keeps, in that
// directory,
//
//	network.json  the world (persist.go's stateFile), written whole
//	media/<sha256> each media blob the host holds or a phone keeps, once
//
// network.json is written aside and renamed over the old one, each synced,
// so a crash leaves the old world or the new, never half of one. It is
// written a moment (saveEvery) after a change, and by Close. Blobs are
// written when uploaded, before network.json names them; files no world
// names any more are removed at start and at Close.

const (
	stateFileName = "network.json"
	mediaDirName  = "media"
	// saveEvery is how often the network looks for changes to write: the
	// changes of that time are written together.
	saveEvery = 250 * time.Millisecond
	// saveShare bounds the time spent writing: after a write that took d,
	// the next waits saveShare×d at least (a large world under a burst of
	// messages is written less often, never most of the time).
	saveShare = 10
)

// changeMutex is the network's lock. Each unlock counts as a change of the
// world: whatever changes it does so under this lock, or counts its change
// itself (signalStore, mediaStore, polls, retries). The keeper writes the
// world when the count moved since it last wrote.
type changeMutex struct {
	sync.Mutex
	gen atomic.Uint64
}

func (m *changeMutex) Unlock() {
	m.gen.Add(1)
	m.Mutex.Unlock()
}

// changed counts a change made outside n.mu.
func (n *Network) changed() { n.mu.gen.Add(1) }

// keepState writes the world a moment after it changed, until the network
// closes (Close writes the last state itself).
func (n *Network) keepState() {
	defer n.wg.Done()
	saved := n.mu.gen.Load()
	wait := saveEvery
	for {
		t := time.NewTimer(wait)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = saveEvery
		if n.mu.gen.Load() == saved {
			continue
		}
		start := time.Now()
		gen, err := n.writeState()
		wait = max(saveEvery, saveShare*time.Since(start))
		if err != nil {
			n.log.Error("wafake: could not write the network's state; retrying", "dir", n.stateDir, "err", err)
			continue
		}
		saved = gen
	}
}

// saveState writes the world now.
func (n *Network) saveState() error {
	_, err := n.writeState()
	return err
}

// writeState writes the world and returns the change count it holds.
func (n *Network) writeState() (uint64, error) {
	st, gen, err := n.snapshot()
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("wafake: encode the network's state: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(n.stateDir, stateFileName), b); err != nil {
		return 0, fmt.Errorf("wafake: write the network's state: %w", err)
	}
	return gen, nil
}

// loadState prepares the state directory and takes over the world an
// earlier network left there, if any.
func (n *Network) loadState() error {
	if n.stateDir == "" {
		return nil
	}
	n.media.dir = filepath.Join(n.stateDir, mediaDirName)
	if err := os.MkdirAll(n.media.dir, 0o700); err != nil {
		return fmt.Errorf("wafake: state directory: %w", err)
	}
	path := filepath.Join(n.stateDir, stateFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		n.log.Info("wafake: a new simulated network; its state is kept", "dir", n.stateDir)
		return nil
	}
	if err != nil {
		return fmt.Errorf("wafake: read the network's state: %w", err)
	}
	var st stateFile
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("wafake: %s is not a network state (%w): remove it to start a new network", path, err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("wafake: %s has state version %d, this network reads %d: remove it to start a new network", path, st.Version, stateVersion)
	}
	if err := n.restore(&st); err != nil {
		return fmt.Errorf("wafake: %s: %w: remove it to start a new network", path, err)
	}
	n.collectMedia()
	n.log.Info("wafake: the simulated network restored its state", "dir", n.stateDir, "accounts", len(st.Accounts), "groups", len(st.Groups))
	return nil
}

// writeFileAtomic replaces path with data: written to a temporary file in
// the same directory, synced, renamed over path, and the directory synced,
// so that path holds either its old content or data, whole.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return datadir.SyncDir(dir)
}
