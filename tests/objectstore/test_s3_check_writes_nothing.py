"""A check of a copy's output prefix reads only: an unfinished copy there is left as it is until a copy writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.objectstore.resize import check_output_prefix


def test_the_check_of_an_output_prefix_deletes_nothing(bucket: BucketFixture, cr13_artifact: Path) -> None:
    bucket.upload(cr13_artifact, "left/qwen")
    bucket.client.put_object(Bucket=bucket.name, Key=f"left/qwen/{INCOMPLETE_MARKER}", Body=b"{}")
    before = bucket.objects("left/")
    check_output_prefix(BucketPrefix(bucket.name, "left/qwen"))  # an unfinished copy: not refused
    assert bucket.objects("left/") == before  # and not removed by a check
    bucket.upload(cr13_artifact, "whole/qwen")
    with pytest.raises(StudioError, match="is not empty"):
        check_output_prefix(BucketPrefix(bucket.name, "whole/qwen"))
