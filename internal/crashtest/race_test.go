//go:build race

package crashtest

// raceBuild: the test runs under the race detector, so the children do too
// (their packages are then the ones the test build compiled already).
const raceBuild = true
