package wafake

// Connections per device, as the network sees them: for tests that run
// several processes against one network (a cluster: each session is to
// connect from one process at a time) and check that no device was ever
// logged in twice at once.
//
// A connection counts from the moment the network accepts its login (the
// device known, its noise key right) until the network has seen it closed
// (its read loop has ended), not until the client says it is leaving: a
// second login while the first connection is still open on the server,
// even one that is about to be replaced, shows as two open at once. That
// is what a real WhatsApp would see, and what a test of "never twice" must
// not miss.

// DeviceConnections counts the logged-in connections of one device.
type DeviceConnections struct {
	// Open is how many connections are logged in as the device now.
	Open int
	// MaxOpen is the most that were ever open at the same time.
	MaxOpen int
	// Logins is how many logins the network accepted, in all.
	Logins int
	// Replaced is how many logins found another connection of the device
	// still logged in and replaced it (<stream:error><conflict
	// type="replaced"/>, whatsmeow's events.StreamReplaced on the old one).
	Replaced int
}

// connCounts is the network's DeviceConnections, by device JID (with its
// device number), under Network.mu. Entries outlive their devices (a
// removed device keeps its history).
type connCounts map[string]*DeviceConnections

// loginLocked counts an accepted login of device; replaced says it kicks
// another connection still open. Network.mu is held.
func (cc connCounts) loginLocked(device string, replaced bool) {
	d := cc[device]
	if d == nil {
		d = &DeviceConnections{}
		cc[device] = d
	}
	d.Open++
	d.MaxOpen = max(d.MaxOpen, d.Open)
	d.Logins++
	if replaced {
		d.Replaced++
	}
}

// closedLocked counts the end of a connection of device that
// loginLocked counted. Network.mu is held.
func (cc connCounts) closedLocked(device string) {
	if d := cc[device]; d != nil && d.Open > 0 {
		d.Open--
	}
}

// ConnectionCounts returns the connection counts of every device that ever
// logged in, by device JID ("491701234567:1@s.whatsapp.net").
func (n *Network) ConnectionCounts() map[string]DeviceConnections {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]DeviceConnections, len(n.counts))
	for dev, d := range n.counts {
		out[dev] = *d
	}
	return out
}
