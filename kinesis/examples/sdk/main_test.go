package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// The example against an endpoint of the test: every customer's orders,
// in order, across the split.
func TestExample(t *testing.T) {
	ep := kinesistest.Start(t)
	var out strings.Builder
	if err := run(context.Background(), kinesis.NewFromConfig(ep.Config), &out); err != nil {
		t.Fatal(err)
	}
	want := "alice: [order 0 order 3 order 6 order 9]\nbob: [order 1 order 4 order 7 order 10]\ncarol: [order 2 order 5 order 8 order 11]\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
