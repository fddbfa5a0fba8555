// Package kinesistest runs a Kinesis endpoint (package kinesis) for the
// length of a test and gives a ready configuration of the AWS SDK for Go
// v2 pointed at it:
//
//	func TestProducer(t *testing.T) {
//		ep := kinesistest.Start(t)
//		client := kinesis.NewFromConfig(ep.Config) // github.com/aws/aws-sdk-go-v2/service/kinesis
//		_, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("s"), ShardCount: aws.Int32(2)})
//		...
//	}
//
// The endpoint serves an in-memory DB (Start) or any backend (StartWith)
// on a loopback port, with HTTP/1.1 and unencrypted HTTP/2 (for
// SubscribeToShard), and is closed when the test ends.
package kinesistest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
)

// Endpoint is a running Kinesis endpoint.
type Endpoint struct {
	// URL is the endpoint's base URL, "http://127.0.0.1:port".
	URL string
	// Config is an AWS SDK configuration for the endpoint: region
	// us-east-1, static test credentials (the endpoint checks that
	// requests are signed, not with which keys), BaseEndpoint set to URL,
	// and an HTTP client that speaks HTTP/2 without TLS when asked.
	Config aws.Config
	// Handler is the endpoint's handler.
	Handler *kinesis.Handler
	// DB is the in-memory DB of an endpoint made by Start; nil for
	// StartWith.
	DB *xstream.DB
}

// Start runs an endpoint over a new in-memory DB with the given
// handler options (statuses change at once unless kinesis.WithDelays
// says otherwise), closed at the end of the test.
func Start(t testing.TB, opts ...kinesis.Option) *Endpoint {
	t.Helper()
	db := xstream.NewDB()
	ep := StartWith(t, kinesis.LocalBackend(db), opts...)
	ep.DB = db
	return ep
}

// StartWith runs an endpoint over backend b, closed at the end of the
// test.
func StartWith(t testing.TB, b kinesis.Backend, opts ...kinesis.Option) *Endpoint {
	t.Helper()
	h := kinesis.New(b, opts...)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &Endpoint{URL: srv.URL, Config: Config(srv.URL), Handler: h}
}

// Config returns an AWS SDK configuration pointed at the endpoint at
// url (such as xstream-server's -kinesis-addr), with static test
// credentials and region us-east-1.
func Config(url string) aws.Config {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Source: "kinesistest"}, nil
		}),
		HTTPClient: &http.Client{Transport: tr},
	}
}
