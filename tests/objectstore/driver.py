"""A resize of a bucket's artifact in a process of its own, for the kill tests (the fault hook acts on its steps).

python driver.py in-place URL COUNT | copy URL OUTPUT_URL COUNT
"""

from __future__ import annotations

import sys

from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.objectstore.resize import resize_bucket_in_place, resize_bucket_to_copy


def main(argv: list[str]) -> None:
    if argv[0] == "in-place":
        resize_bucket_in_place(ResizeRequest(parse_bucket_prefix(argv[1]), int(argv[2])))
    else:
        resize_bucket_to_copy(
            ResizeRequest(parse_bucket_prefix(argv[1]), int(argv[3]), output=parse_bucket_prefix(argv[2]))
        )


if __name__ == "__main__":
    main(sys.argv[1:])
