package config

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strconv"
	"strings"
)

// ClusterTLS is the cluster's TLS as loaded from its files: this process's
// certificate and key, and the CAs a peer's certificate must come from.
type ClusterTLS struct {
	Cert tls.Certificate
	CAs  *x509.CertPool
}

func parseClusterAddr(c *Config, v string) string {
	if v == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || strings.ContainsAny(host, " /") {
		return "want the host:port to listen on for the other processes, such as 10.0.0.5:8443 or :8443"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "port must be a number from 0 to 65535"
	}
	c.ClusterAddr = v
	return ""
}

// pathInto stores a file's path as given; checkCluster reads the file.
func pathInto(field func(*Config) *string) func(*Config, string) string {
	return func(c *Config, v string) string {
		*field(c) = strings.TrimSpace(v)
		return ""
	}
}

// checkCluster checks the cluster's settings together, once each has been
// read, and loads the TLS files: all three or none, each readable, the key
// the certificate's, the certificate signed by the CA for both ends of a
// connection. What the other processes would refuse stops the start here,
// naming the file, rather than failing every forwarded call later.
func (c *Config) checkCluster() *Error {
	files := []struct{ flag, env, path string }{
		{"cluster-tls-cert", "WAGRAPH_CLUSTER_TLS_CERT", c.ClusterTLSCert},
		{"cluster-tls-key", "WAGRAPH_CLUSTER_TLS_KEY", c.ClusterTLSKey},
		{"cluster-tls-ca", "WAGRAPH_CLUSTER_TLS_CA", c.ClusterTLSCA},
	}
	set := 0
	for _, f := range files {
		if f.path != "" {
			set++
		}
	}
	if c.ClusterAddr != "" && !c.Clustered() {
		return &Error{Flag: "cluster-addr", Env: "WAGRAPH_CLUSTER_ADDR", Value: c.ClusterAddr,
			Problem: "a cluster shares one PostgreSQL database: set --database-url too, or leave this unset"}
	}
	if set == 0 {
		return nil
	}
	for _, f := range files {
		switch {
		case f.path != "" && !c.Clustered():
			return &Error{Flag: f.flag, Env: f.env, Value: f.path,
				Problem: "a cluster shares one PostgreSQL database: set --database-url too, or leave this unset"}
		case f.path == "":
			return &Error{Flag: f.flag, Env: f.env, Value: "",
				Problem: "the cluster's TLS needs --cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca together: set this one too, or none of them"}
		}
	}
	if c.ClusterAddr == "" {
		return &Error{Flag: "cluster-addr", Env: "WAGRAPH_CLUSTER_ADDR", Value: "",
			Problem: "with --cluster-tls-* the calls between processes have a TLS listener of their own: set it, such as 10.0.0.5:8443, and --advertise-addr to the address the others reach it at"}
	}
	pem := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return &Error{Flag: f.flag, Env: f.env, Value: f.path, Problem: "cannot read the file: " + err.Error()}
		}
		pem[i] = b
	}
	cert, err := tls.X509KeyPair(pem[0], pem[1])
	if err != nil {
		return &Error{Flag: "cluster-tls-key", Env: "WAGRAPH_CLUSTER_TLS_KEY", Value: c.ClusterTLSKey,
			Problem: "want the PEM private key of the PEM certificate in --cluster-tls-cert: " + err.Error()}
	}
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(pem[2]) {
		return &Error{Flag: "cluster-tls-ca", Env: "WAGRAPH_CLUSTER_TLS_CA", Value: c.ClusterTLSCA,
			Problem: "no PEM certificate in the file: want the CA that signed every process's --cluster-tls-cert"}
	}
	// Each process is a server and a client of the others: its
	// certificate must pass as both, against the cluster's CA.
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return &Error{Flag: "cluster-tls-cert", Env: "WAGRAPH_CLUSTER_TLS_CERT", Value: c.ClusterTLSCert,
			Problem: "not an X.509 certificate: " + err.Error()}
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	for _, use := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		// One usage at a time: VerifyOptions accepts a chain good for any
		// of those listed.
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: cas, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{use}}); err != nil {
			return &Error{Flag: "cluster-tls-cert", Env: "WAGRAPH_CLUSTER_TLS_CERT", Value: c.ClusterTLSCert,
				Problem: "the other processes would refuse it: it must be signed by --cluster-tls-ca, valid now, for server and client authentication: " + err.Error()}
		}
	}
	c.ClusterTLS = &ClusterTLS{Cert: cert, CAs: cas}
	return nil
}
