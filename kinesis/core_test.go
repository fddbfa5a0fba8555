package kinesis_test

import (
	"testing"

	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// The behaviour tests on the in-process DB. (Module kinesis/kredis runs
// them on Redis and a Redis Cluster.)
func TestLocalBackend(t *testing.T) {
	kinesistest.RunBackend(t, func(t *testing.T, opts ...kinesis.Option) *kinesistest.Endpoint {
		return kinesistest.Start(t, opts...)
	})
}
