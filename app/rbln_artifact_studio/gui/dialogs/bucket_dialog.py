"""File ▸ Open Bucket…: endpoint, bucket, prefix and profile of an S3-compatible store; its artifacts join the table.

The endpoint and profile are kept with the bucket, in its location (core/location.BucketPrefix: they win over
AWS_ENDPOINT_URL and AWS_PROFILE for that bucket only, never written into the environment), so every row and every
action on it reaches its own store, and the workspace remembers them with the bucket; the keys stay where the chain
keeps them (~/.aws/credentials, the environment), never here.
The bucket's rows show it and its store in the Host column (core/location.host_of); the scan runs in a job.
"""

from __future__ import annotations

import os

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, bucket_endpoint, parse_bucket_prefix
from rbln_artifact_studio.gui.app.session_settings import BucketEntry
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.place_scan import open_place


class BucketDialog(QDialog):
    """Where the bucket is: what the user types, checked before the dialog closes."""

    def __init__(self, parent: QWidget | None = None, last: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bucketDialog")
        self.setWindowTitle("Open Bucket")
        last = last or {}  # the bucket opened last time: its fields, filled in again
        # Empty fields are the AWS chain's own store (AWS_ENDPOINT_URL, AWS_PROFILE), shown as placeholders: a bucket
        # keeps only what was typed, so it reaches the same store whatever the environment of a later start.
        chain_endpoint, chain_profile = os.environ.get("AWS_ENDPOINT_URL", ""), os.environ.get("AWS_PROFILE", "")
        self.endpoint = self._field(
            "bucketEndpoint",
            last.get("endpoint", ""),
            f"{chain_endpoint} (AWS_ENDPOINT_URL)" if chain_endpoint else "http://minio.local:9000",
        )
        self.endpoint.setToolTip(
            "Empty: the endpoint_url of the Profile below (~/.aws/config), else AWS_ENDPOINT_URL, else AWS_PROFILE's "
            "endpoint_url, else AWS S3."
        )
        self.bucket = self._field("bucketName", last.get("bucket", ""), "models")
        self.prefix = self._field("bucketPrefix", last.get("prefix", ""), "fleet (empty: the whole bucket)")
        self.profile = self._field(
            "bucketProfile", last.get("profile", ""), f"{chain_profile} (AWS_PROFILE)" if chain_profile else "default"
        )
        self.profile.setToolTip(
            "A profile of ~/.aws/config: its keys, region and endpoint_url reach this bucket (as aws --profile)."
        )
        self.problem = QLabel()
        self.problem.setObjectName("bucketProblem")
        self.problem.setWordWrap(True)
        self._lay_out()

    def _lay_out(self) -> None:
        """The four fields in a form, the problem line under them, then Open and Cancel."""
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
        """The prefix the fields name, with its store (StudioError saying what is wrong)."""
        return bucket_location(self.choice())

    def entry(self) -> BucketEntry:
        """What to remember of the bucket: its URL (its store in it), endpoint and profile (its keys stay with the
        AWS chain)."""
        where = self.location()
        return BucketEntry(where.url, where.endpoint, where.profile)

    def accept(self) -> None:
        try:
            self.location()
        except StudioError as exc:
            self.problem.setText(str(exc))
            return
        super().accept()


def bucket_location(choice: dict[str, str]) -> BucketPrefix:
    """The bucket prefix the dialog's fields (or Open Recent's remembered choice) name, with its store: the profile
    and endpoint given (StudioError saying what is wrong)."""
    bucket, prefix = str(choice.get("bucket", "")).strip(), str(choice.get("prefix", "")).strip().strip("/")
    where = parse_bucket_prefix(BucketPrefix(bucket, prefix).url)
    profile = str(choice.get("profile") or "").strip()
    store = BucketPrefix(bucket, "", profile, bucket_endpoint(str(choice.get("endpoint") or ""))).url
    return parse_bucket_prefix(f"{store}/{where.prefix}")  # a profile's name checked as a location's is


def entry_location(entry: BucketEntry) -> BucketPrefix:
    """A remembered bucket's location with its store (one remembered before locations named their store: the
    endpoint and profile kept beside its URL)."""
    where = parse_bucket_prefix(entry.url)
    if where.store == ("", "") and (entry.endpoint or entry.profile):
        return bucket_location({"bucket": where.bucket, "prefix": where.prefix, **entry.__dict__})
    return where


def reopen_buckets(jobs: JobManager, model: ArtifactTableModel, entries: list[BucketEntry]) -> Job | None:
    """The buckets open when the studio last quit, one after the other, each in its own store."""
    if not entries:
        return None
    first, rest = entries[0], entries[1:]
    try:
        root = entry_location(first)
    except StudioError:
        return reopen_buckets(jobs, model, rest)  # an edited settings file: skip what is not a bucket
    job = open_bucket(jobs, model, root)
    job.finished.connect(lambda: reopen_buckets(jobs, model, rest))
    return job


def open_bucket(jobs: JobManager, model: ArtifactTableModel, root: BucketPrefix) -> Job:
    """Scan root in a job; its rows join the table beside the folder's and the servers' (a failure is the job's)."""
    return open_place(jobs, model, root)
