package mcpserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeListsTheTools: the README's table of tools is Tools, name for
// name and read-only for read-only, in its order.
func TestReadmeListsTheTools(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## AI agents: the MCP server\n")
	if !ok {
		t.Fatal(`README.md has no "## AI agents: the MCP server" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var got, want []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		got = append(got, strings.Trim(strings.TrimSpace(cells[1]), "`")+" "+strings.TrimSpace(cells[2]))
	}
	for _, tool := range Tools() {
		ro := "no"
		if tool.ReadOnly {
			ro = "yes"
		}
		want = append(want, tool.Name+" "+ro)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the README's tools %q, want %q", got, want)
	}
}
