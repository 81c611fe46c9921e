"""The object-storage libraries, an optional extra (boto3 and botocore for the writes, obstore for the reads), in
one module: objectstore/client.py loads it with the first bucket a command or the desktop uses (client.sdk()), so
nothing else pays for them."""

import boto3
import botocore.exceptions
import botocore.session
import obstore
import obstore.exceptions
from botocore.config import Config
from botocore.configprovider import ConfiguredEndpointProvider, ConstantProvider
from obstore.auth.boto3 import Boto3CredentialProvider
from obstore.store import S3Store

__all__ = [
    "Boto3CredentialProvider",
    "Config",
    "ConfiguredEndpointProvider",
    "ConstantProvider",
    "S3Store",
    "boto3",
    "botocore",
    "obstore",
]
