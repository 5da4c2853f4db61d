package wafake

import (
	"encoding/binary"
	"strconv"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// handleEncrypt serves the prekey IQs of a logged-in device: the count of
// prekeys the server holds, and uploads of new ones.
func (n *Network) handleEncrypt(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	typ := node.AttrGetter().String("type")
	if _, ok := node.GetOptionalChildByTag("count"); ok && typ == "get" {
		n.mu.Lock()
		count := len(c.dev.prekeys)
		n.mu.Unlock()
		return []waBinary.Node{{Tag: "count", Attrs: waBinary.Attrs{"value": strconv.Itoa(count)}}}, nil
	}
	if key, ok := node.GetOptionalChildByTag("key"); ok && typ == "get" {
		return n.handleKeyFetch(key), nil
	}
	if list, ok := node.GetOptionalChildByTag("list"); ok && typ == "set" {
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, k := range list.GetChildren() {
			id, _ := k.GetChildByTag("id").Content.([]byte)
			val, _ := k.GetChildByTag("value").Content.([]byte)
			if len(id) == 3 && len(val) == 32 {
				c.dev.prekeys[uint32(id[0])<<16|uint32(binary.BigEndian.Uint16(id[1:]))] = [32]byte(val)
			}
		}
	}
	return nil, nil
}
