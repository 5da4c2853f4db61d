package ent

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// migrateSchema is ent's generated description of the tables
// (migrate/schema.go), what Schema.Create brings a database to. Written by
// hand, like sqlite.go and withtx.go.
//
//go:embed migrate/schema.go
var migrateSchema string

// SchemaVersion names the schema this build migrates to: the hash of its
// generated description, so it changes with every change of the schema
// (make generate rewrites that file) and with nothing else. A database that
// records it (internal/storage) needs no migration.
func SchemaVersion() string {
	sum := sha256.Sum256([]byte(migrateSchema))
	return hex.EncodeToString(sum[:16])
}
