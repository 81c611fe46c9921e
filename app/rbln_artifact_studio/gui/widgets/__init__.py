"""Reusable painted widgets and small controls: charts, gauges, number fields, fix buttons."""
