//go:build !race

package testbin

const race = false
