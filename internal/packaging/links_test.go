package packaging

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdMention is a file named in backquotes, such as `docs/events.md` or
// `rest.md`: a newcomer looks for it in the repository too.
var mdMention = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.md)`")

// TestDocsLinkOnlyWhatIsHere: every relative link of the user-facing
// documents, and every file they name in backquotes, is in the repository
// (an anchor after # is not checked; absolute URLs are not followed).
func TestDocsLinkOnlyWhatIsHere(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := []string{"README.md", "ARCHITECTURE.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		rel, _ := filepath.Rel(root, m)
		docs = append(docs, rel)
	}
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(doc)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, dir, target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", doc, m[1])
			}
		}
		for _, m := range mdMention.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			if strings.HasPrefix(name, "/") || strings.Contains(name, "…") {
				continue // a path on the user's machine, or an elided one
			}
			if !existsSomewhere(root, dir, name) {
				t.Errorf("%s names %s, which is not in the repository", doc, name)
			}
		}
	}
}

// existsSomewhere finds name relative to the document, to the root, or as
// the base name of a file anywhere in the tree (`events.md` for
// docs/events.md).
func existsSomewhere(root, dir, name string) bool {
	for _, p := range []string{filepath.Join(root, dir, name), filepath.Join(root, name)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	if strings.Contains(name, "/") {
		return false
	}
	found := false
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == name {
			found = true
		}
		return nil
	})
	return found
}
