// Command httpproxy-oracle answers proxy questions with Go's own code, so that rudder's
// watch/proxyenv.c and watch/url.c can be compared with it.
//
// Questions on stdin, one per line, tab-separated; one answer line each on stdout:
//
//	use      "<NO_PROXY>\t<url>": httpproxy.Config{HTTPProxy, HTTPSProxy: "http://proxy:1", NoProxy}
//	         .ProxyFunc()(url) -> "proxy" or "direct"
//	proxy    "<HTTPS_PROXY value>": the proxy URL used for https://example.com/ -> "none", or
//	         "scheme host port user:pass" (host without brackets, port defaulted as Go's transport does)
//	resolve  "<base>\t<ref>": url.Parse(base).Parse(ref) -> the resolved URL, or "ERR"
package main

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		f := strings.Split(in.Text(), "\t")
		switch f[0] {
		case "use":
			cfg := httpproxy.Config{HTTPProxy: "http://proxy:1", HTTPSProxy: "http://proxy:1", NoProxy: f[1]}
			u, err := url.Parse(f[2])
			if err != nil {
				fmt.Fprintln(out, "ERR")
				continue
			}
			p, err := cfg.ProxyFunc()(u)
			switch {
			case err != nil:
				fmt.Fprintln(out, "ERR")
			case p != nil:
				fmt.Fprintln(out, "proxy")
			default:
				fmt.Fprintln(out, "direct")
			}
		case "proxy":
			cfg := httpproxy.Config{HTTPSProxy: f[1]}
			p, err := cfg.ProxyFunc()(&url.URL{Scheme: "https", Host: "example.com"})
			if err != nil || p == nil {
				fmt.Fprintln(out, "none")
				continue
			}
			port := p.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443", "socks5": "1080"}[p.Scheme]
			}
			user := "-"
			if p.User != nil {
				pw, _ := p.User.Password()
				user = p.User.Username() + ":" + pw
			}
			fmt.Fprintf(out, "%s %s %s %s\n", p.Scheme, p.Hostname(), port, user)
		case "resolve":
			b, err := url.Parse(f[1])
			if err != nil {
				fmt.Fprintln(out, "ERR")
				continue
			}
			r, err := b.Parse(f[2])
			if err != nil {
				fmt.Fprintln(out, "ERR")
				continue
			}
			r.Fragment, r.RawFragment = "", ""
			fmt.Fprintln(out, r.String())
		default:
			fmt.Fprintln(out, "ERR")
		}
	}
}
