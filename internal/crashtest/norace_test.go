//go:build !race

package crashtest

const raceBuild = false
