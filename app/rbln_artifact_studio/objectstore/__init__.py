"""Artifacts in S3-compatible buckets: list, read metadata only (ranged GETs), resize with server-side copies.

The clients (boto3 for the AWS credential chain and the writes, obstore for the many small reads) come with the
`[s3]` extra; without it the package still imports and a command on a bucket location names the extra.
"""
