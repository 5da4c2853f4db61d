// Package mediastore keeps media files by their content: each file is
// named by the hex SHA-256 of its bytes, so a file received by several
// sessions (or sent and received again) is kept once, and its name is the
// ETag the media route answers with. Two stores offer the same methods:
// Local, files under the data directory, and S3, an S3-compatible bucket
// that every process of a cluster reaches.
//
// A store knows bytes only: which message refers to which file, and when
// a file is no longer referred to, is its user's to know.
package mediastore
