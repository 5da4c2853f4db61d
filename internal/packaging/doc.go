// Package packaging holds the tests of how wagraph reaches a machine, and
// nothing else: build/go.sh (Go 1.26 from the module proxy when the
// machine has none new enough, under .toolchain/ and off PATH), what make
// installs (build/deps.sh, against the README's list), the Dockerfile and
// build/rootfs.sh (the image's final stage built as a directory, the
// server started in it with chroot and reached on /readyz), kept in
// agreement by reading the Dockerfile rather than trusting it.
package packaging
