"""File ▸ Open Bucket…: endpoint, bucket, prefix and profile of an S3-compatible store; its artifacts join the table.

The endpoint and profile are kept by the objectstore layer (objectstore/client.use: they win over AWS_ENDPOINT_URL and
AWS_PROFILE, never written into the environment, and a child process that may reach a bucket is given them); the keys
stay where the chain keeps them (~/.aws/credentials, the environment), never here.
The bucket's rows show its URL in the Host column (core/location.host_of); the scan runs in a job.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, parse_bucket_prefix
from rbln_artifact_studio.gui.app.session_settings import BucketEntry

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
    from rbln_artifact_studio.gui.models.jobs import Job, JobManager


class BucketDialog(QDialog):
    """Where the bucket is: what the user types, checked before the dialog closes."""

    def __init__(self, parent: QWidget | None = None, last: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bucketDialog")
        self.setWindowTitle("Open Bucket")
        last = last or {}  # the bucket opened last time: its fields, filled in again
        endpoint = last.get("endpoint") or os.environ.get("AWS_ENDPOINT_URL", "")
        self.endpoint = self._field("bucketEndpoint", endpoint, "http://minio.local:9000")
        self.endpoint.setToolTip("Empty: the endpoint of the profile (endpoint_url in ~/.aws/config), else AWS S3.")
        self.bucket = self._field("bucketName", last.get("bucket", ""), "models")
        self.prefix = self._field("bucketPrefix", last.get("prefix", ""), "fleet (empty: the whole bucket)")
        self.profile = self._field("bucketProfile", last.get("profile") or os.environ.get("AWS_PROFILE", ""), "default")
        self.profile.setToolTip("A profile of ~/.aws/config and ~/.aws/credentials; its keys are read from there.")
        self.problem = QLabel()
        self.problem.setObjectName("bucketProblem")
        self.problem.setWordWrap(True)
        form = QFormLayout()
        for label, field in (
            ("Endpoint", self.endpoint),
            ("Bucket", self.bucket),
            ("Prefix", self.prefix),
            ("Profile", self.profile),
        ):
            form.addRow(label, field)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        # Wide enough for a whole endpoint URL (it was 207 pixels wide, the endpoint cut off).
        self.endpoint.setMinimumWidth(
            self.endpoint.fontMetrics().horizontalAdvance("https://s3.eu-central-1.example.com:9000") + 24
        )
        self.problem.setMinimumWidth(self.endpoint.minimumWidth())

    def choice(self) -> dict[str, str]:
        """What to fill in next time and list in Open Recent (no key: those stay with the AWS chain)."""
        fields = {"endpoint": self.endpoint, "bucket": self.bucket, "prefix": self.prefix, "profile": self.profile}
        return {name: field.text().strip() for name, field in fields.items()}

    def _field(self, name: str, text: str, placeholder: str) -> QLineEdit:
        field = QLineEdit(text)
        field.setObjectName(name)
        field.setPlaceholderText(placeholder)
        return field

    def location(self) -> BucketPrefix:
        """The prefix the fields name (StudioError saying what is wrong)."""
        bucket, prefix = self.bucket.text().strip(), self.prefix.text().strip().strip("/")
        return parse_bucket_prefix(BucketPrefix(bucket, prefix).url)

    def entry(self) -> BucketEntry:
        """What to remember of the bucket: its URL, endpoint and profile (its keys stay with the AWS chain)."""
        return BucketEntry(self.location().url, self.endpoint.text().strip(), self.profile.text().strip())

    def accept(self) -> None:
        try:
            self.location()
        except StudioError as exc:
            self.problem.setText(str(exc))
            return
        from rbln_artifact_studio.objectstore.client import use  # imports no client library

        use(self.endpoint.text().strip() or None, self.profile.text().strip() or None)
        super().accept()


def reopen_buckets(jobs: JobManager, model: ArtifactTableModel, entries: list[BucketEntry]) -> Job | None:
    """The buckets open when the studio last quit, one after the other (each through its own endpoint and profile,
    which the objectstore layer takes when its scan starts)."""
    from rbln_artifact_studio.objectstore.client import use

    if not entries:
        return None
    first, rest = entries[0], entries[1:]
    use(first.endpoint or None, first.profile or None)
    try:
        root = parse_bucket_prefix(first.url)
    except StudioError:
        return reopen_buckets(jobs, model, rest)  # an edited settings file: skip what is not a bucket
    job = open_bucket(jobs, model, root)
    job.finished.connect(lambda: reopen_buckets(jobs, model, rest))
    return job


def open_bucket(jobs: JobManager, model: ArtifactTableModel, root: BucketPrefix) -> Job:
    """Scan root in a job; its rows join the table beside the folder's and the servers' (a failure is the job's)."""
    from rbln_artifact_studio.gui.models.place_scan import open_place

    return open_place(jobs, model, root)
