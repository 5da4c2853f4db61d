//go:build race

package main

// raceBuild: the test runs under the race detector, so the wagraph it
// builds for its child processes does too.
const raceBuild = true
