// Package kinesis serves the Amazon Kinesis Data Streams API over
// xstream's sharded streams, so that AWS SDKs, the AWS CLI and KCL-style
// consumers talk to xstream unchanged.
//
// # A tour
//
// A Handler is an http.Handler. Give it a Backend, the place its streams
// live: an in-process DB (LocalBackend; durable when the DB is), or a
// Redis engine (package kredis, module
// github.com/xstreamgo/xstream/kinesis/kredis; several endpoint
// processes may share one Redis Cluster), and serve it with HTTP/1.1 and
// unencrypted HTTP/2, which SubscribeToShard's clients use:
//
//	db := xstream.NewDB()
//	srv := &http.Server{Addr: "127.0.0.1:4567", Handler: kinesis.New(kinesis.LocalBackend(db)), Protocols: new(http.Protocols)}
//	srv.Protocols.SetHTTP1(true)
//	srv.Protocols.SetUnencryptedHTTP2(true)
//	srv.ListenAndServe()
//
// and point a client at it:
//
//	aws --endpoint-url http://127.0.0.1:4567 kinesis create-stream --stream-name orders --shard-count 2
//
// In tests, package kinesistest starts an endpoint and returns a ready
// configuration of the AWS SDK for Go v2; xstream-server -kinesis-addr
// serves the same handler beside the Redis protocol.
//
// # The wire
//
// Requests are POSTs with X-Amz-Target: Kinesis_20131202.<Action> and a
// body in JSON 1.1 (application/x-amz-json-1.1, Data in base64) or CBOR
// 1.1 (application/x-amz-cbor-1.1, Data a byte string, timestamps tagged
// epoch milliseconds: what the Java SDK sends by default); the answer is
// in the request's encoding. A request must be signed (an Authorization
// header of Signature Version 4, or its query form): without one it is
// refused with MissingAuthenticationTokenException, as Kinesis refuses
// it; the signature is not checked, so any keys do. Errors are written as
// Kinesis writes them, status 400 and {"__type": "...Exception",
// "message": ...}, with Kinesis's wording for its validation errors
// (which field, which constraint, the value given).
//
// # Actions
//
// CreateStream, DeleteStream, DescribeStream, DescribeStreamSummary,
// ListStreams, ListShards, PutRecord, PutRecords, GetShardIterator,
// GetRecords, SplitShard, MergeShards, UpdateShardCount,
// IncreaseStreamRetentionPeriod, DecreaseStreamRetentionPeriod,
// AddTagsToStream, RemoveTagsFromStream, ListTagsForStream,
// DescribeLimits, and the enhanced fan-out actions RegisterStreamConsumer,
// DescribeStreamConsumer, ListStreamConsumers, DeregisterStreamConsumer
// and SubscribeToShard. StreamARN is accepted wherever StreamName is.
//
// # Kinesis's behaviour
//
// Each Kinesis stream is a sharded stream of the backend (MD5 routing,
// split, merge, rescale, OPEN/CLOSED/EXPIRED shards, retention): see
// xstream.ShardedStream. On top of it the handler keeps what Kinesis adds:
//
//   - Statuses: CREATING, ACTIVE, UPDATING and DELETING, each
//     transitional one lasting a configurable delay (WithDelays; instant
//     by default), with ResourceInUseException for what needs an ACTIVE
//     stream (see status.go).
//   - The account's limit on OPEN shards (WithShardLimit),
//     LimitExceededException past it.
//   - Sequence numbers: decimal strings of up to 128 bits, increasing
//     within a shard, that pack a record's shard and ID (see seqnum.go).
//   - Shard iterators: opaque strings that expire five minutes after
//     they are issued (ExpiredIteratorException; see iterator.go).
//   - Limits: 1 MiB of Data a record, 500 records and 5 MiB a PutRecords,
//     10,000 records and 10 MiB a GetRecords, 50 tags and 20 consumers a
//     stream.
//
// SubscribeToShard (subscribe.go) streams SubscribeToShardEvent events in
// the AWS event-stream encoding over HTTP/2 (or HTTP/1.1): the handler is
// meant to be served with unencrypted HTTP/2 enabled, as kinesistest and
// xstream-server do.
//
// # What differs from Kinesis
//
// No throughput limits per shard (ProvisionedThroughputExceededException
// is never returned), no limit on the number of reshards a day, no
// encryption, no enhanced monitoring, no resource policies, and no
// checking of signatures; actions newer than the ones above are
// UnknownOperationException. Sequence numbers have 39 digits at most
// where Kinesis's have 56. A Data blob is stored as the record's field
// "data"; records put by Go code with other fields read as the JSON
// object of their fields. On a shared backend, puts and reads trust the
// catalog for up to WithCatalogCache (a second).
package kinesis
