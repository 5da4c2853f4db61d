package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/backup"
	"github.com/wagraph/wagraph/internal/config"
)

// backupCommand copies a data directory while a server may be running on
// it: it takes no lock (the server holds it), and the copy is SQLite's own
// consistent one (internal/backup).
func (c *cli) backupCommand() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "copy an SQLite data directory to one file, while the server runs",
		Long: `Take a consistent copy of an SQLite data directory into one file (a .tar.gz) while
wagraph serve runs on it: the server is neither stopped nor locked out. To restore, stop
wagraph, unpack the file into an empty directory (tar -xzf FILE -C DIR) and start wagraph
with --data-dir DIR. On PostgreSQL (--database-url) back up the database with pg_dump.
The local media store (<data-dir>/media) is in the copy; media kept in S3
(--media-store s3://bucket/prefix) is not: it stays in the bucket, which is backed up with
the S3 server's own means (versioning, replication, mc mirror).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromFlags(cmd.Flags(), c.env)
			if err != nil {
				return usageError("wagraph: %v", err)
			}
			if to == "" {
				return usageError("wagraph backup: --to FILE is required: the file the copy is written to")
			}
			if cfg.DatabaseURL != "" {
				return usageError("wagraph backup: the data is on PostgreSQL (--database-url): back it up with pg_dump; wagraph backup copies an SQLite data directory")
			}
			sum, err := backup.ToFile(cmd.Context(), cfg.DataDir, to, newLogger(cfg, c.stderr))
			if err != nil {
				// A command run by hand (or by cron) says what failed in
				// the words of its other errors, not as a log record.
				return &exitError{code: 1, msg: "wagraph backup: " + err.Error()}
			}
			fmt.Fprintln(c.stdout, sum.String())
			if cfg.Media.Kind == config.MediaS3 {
				fmt.Fprintf(c.stdout, "kept media is in %s, not in the backup: back the bucket up with the S3 server's own means (versioning, replication, mc mirror)\n", cfg.Media)
			}
			return nil
		},
	}
	config.TextVar(cmd.Flags(), &to, "to", "file", "", "the file the copy is written to (required)")
	config.Register(cmd.Flags(), "data-dir", "database-url", "media-store", "log-level", "log-format")
	return cmd
}
