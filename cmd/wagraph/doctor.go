package main

import (
	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/doctor"
)

func (c *cli) doctorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "check the data directory, database, ffmpeg, WhatsApp Web version lookup and listen address",
		Long: `Check what wagraph serve needs, with the settings serve would run with (the same flags
and environment variables): the data directory (writable? in use by a running wagraph?
its files private?), the database, ffmpeg, the WhatsApp Web version lookup and the listen address. One line
each, OK, WARN or FAIL, with what to do. Exit status 0 when nothing FAILs, 1 otherwise.
It changes nothing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromFlags(cmd.Flags(), c.env)
			if err != nil {
				return usageError("wagraph: %v", err)
			}
			if doctor.Write(c.stdout, doctor.Run(cmd.Context(), cfg, doctor.Options{})) {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	config.Register(cmd.Flags())
	return cmd
}
