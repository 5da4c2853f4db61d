package whatsapp

// Media kept out of memory: an attachment is downloaded, checked and
// decrypted in a temporary file (whatsmeow's DownloadMediaWithPathToFile
// streams each of those passes), served or uploaded again from there. A
// 100 MiB document held whole, twice while it was decrypted, made a few
// parallel downloads or forwards cost gigabytes.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Body is media bytes kept out of memory (a MediaFile): read at any
// offset, as often as needed.
type Body interface {
	io.ReaderAt
	Size() int64
}

// MediaFile is media in a temporary file of its own, unlinked as soon as
// it is made: nothing is left behind when the process dies, and its space
// is given back when it is closed. Close it once it is no longer needed.
type MediaFile struct {
	f    *os.File
	size int64
	once sync.Once
	err  error
}

// NewMediaFile keeps data in a MediaFile.
func NewMediaFile(data []byte) (*MediaFile, error) {
	f, err := tempFile()
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("write media to a temporary file: %w", err)
	}
	return &MediaFile{f: f, size: int64(len(data))}, nil
}

// tempFile creates a temporary file and unlinks it at once: it lives as
// long as it is open.
func tempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "wagraph-media-*")
	if err != nil {
		return nil, fmt.Errorf("create a temporary file for media: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("unlink the temporary file of media: %w", err)
	}
	return f, nil
}

// Size is the number of bytes.
func (m *MediaFile) Size() int64 { return m.size }

// ReadAt reads the bytes at off.
func (m *MediaFile) ReadAt(p []byte, off int64) (int, error) {
	return io.NewSectionReader(m.f, 0, m.size).ReadAt(p, off)
}

// Reader reads the bytes from the start; each call gets a reader of its own.
func (m *MediaFile) Reader() io.Reader { return io.NewSectionReader(m.f, 0, m.size) }

// Bytes reads the whole of it into memory: for what must hold it so
// (a send forwarded to the process running its session, a scheduled
// send's stored media, an image to decode).
func (m *MediaFile) Bytes() ([]byte, error) { return readBody(m) }

// Close closes the file, which frees its space; later calls do nothing.
func (m *MediaFile) Close() error {
	m.once.Do(func() { m.err = m.f.Close() })
	return m.err
}

// readBody reads the whole of b into memory.
func readBody(b Body) ([]byte, error) {
	data := make([]byte, b.Size())
	if _, err := b.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read media: %w", err)
	}
	return data, nil
}

// errBlobTooLarge: the media host sent more than the download takes (the
// attachment's declared size, or the caller's bound when none is declared).
type errBlobTooLarge struct {
	limit    int64 // of the plaintext
	declared bool  // the limit is the size the message declares
}

func (e *errBlobTooLarge) Error() string {
	if e.declared {
		return fmt.Sprintf("the media is larger than the %d bytes its message declares", e.limit)
	}
	return fmt.Sprintf("the media is larger than %d bytes", e.limit)
}

// boundedFile is the file a download writes the encrypted blob into
// (whatsmeow.File), refusing to grow past max bytes: the blob's size is
// the sender's to choose, and whatsmeow checks it against nothing but the
// blob's own hash, which the sender chose too.
type boundedFile struct {
	f   *os.File
	max int64 // 0: no bound
	pos int64 // of Read, Write and Seek
	err *errBlobTooLarge
}

// blobLimit is the largest encrypted blob of a plaintext of at most n
// bytes: AES-CBC pads to the next block (a whole block when n is a
// multiple), and the blob ends with the 10-byte MAC.
func blobLimit(n int64) int64 { return (n/16+1)*16 + 10 }

func (b *boundedFile) check(end int64) error {
	if b.max > 0 && end > b.max {
		return b.err
	}
	return nil
}

func (b *boundedFile) Write(p []byte) (int, error) {
	if err := b.check(b.pos + int64(len(p))); err != nil {
		return 0, err
	}
	n, err := b.f.Write(p)
	b.pos += int64(n)
	return n, err
}

func (b *boundedFile) WriteAt(p []byte, off int64) (int, error) {
	if err := b.check(off + int64(len(p))); err != nil {
		return 0, err
	}
	return b.f.WriteAt(p, off)
}

func (b *boundedFile) Read(p []byte) (int, error) {
	n, err := b.f.Read(p)
	b.pos += int64(n)
	return n, err
}

func (b *boundedFile) ReadAt(p []byte, off int64) (int, error) { return b.f.ReadAt(p, off) }

func (b *boundedFile) Seek(offset int64, whence int) (int64, error) {
	pos, err := b.f.Seek(offset, whence)
	if err == nil {
		b.pos = pos
	}
	return pos, err
}

func (b *boundedFile) Truncate(size int64) error  { return b.f.Truncate(size) }
func (b *boundedFile) Stat() (os.FileInfo, error) { return b.f.Stat() }
