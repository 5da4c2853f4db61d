package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"net"
)

// TLS is the mutual TLS of the calls between the processes of a cluster
// (--cluster-tls-cert, --cluster-tls-key, --cluster-tls-ca): each process
// presents Cert, both as a server and as a client, and accepts a peer only
// when CAs signed the peer's certificate. The caller also checks that the
// certificate names the host it called (the holder's advertised address),
// as any TLS client does, so a certificate of the same CA made for another
// service cannot stand in for a process. One CA for the cluster, a
// certificate per process naming its advertised host; or one certificate
// naming every host, given as its own CA.
//
// The HMAC signature and the nonce stay: TLS keeps the calls' contents
// (texts, media, pairing codes) from the network and refuses strangers
// before a request is read; the signature says which process a call is for.
type TLS struct {
	Cert tls.Certificate
	CAs  *x509.CertPool
}

// ServerConfig is the listener's side: a client without a certificate the
// CAs signed is refused in the handshake.
func (t *TLS) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13, // only our own processes connect
		Certificates: []tls.Certificate{t.Cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    t.CAs,
	}
}

// clientConfig is the caller's side.
func (t *TLS) clientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{t.Cert},
		RootCAs:      t.CAs,
	}
}

// Listener serves ln with the cluster's TLS: what is served on it is
// reachable only by the processes of the cluster.
func (t *TLS) Listener(ln net.Listener) net.Listener {
	return tls.NewListener(ln, t.ServerConfig())
}
