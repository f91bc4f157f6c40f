#!/usr/bin/env python3
"""Risk scoring for the outpatient clinic.

Author: Halima Odhiambo <halima.odhiambo@example.org>
Reviewed by Baraka Mwangi before release 2.4.1.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

__version__ = "2.4.1"
BUILD = "9fceb02d0ae598e95dc970b74767f19372d61af8"
SCHEMA_ID = "123e4567-e89b-12d3-a456-426614174000"
DATA_DIR = Path("/srv/clinic/data")  # owned by Baraka Mwangi

logger = logging.getLogger("clinic.scoring")


class KamauScore:
    """Score named after the Kamau rule (not a person in this file)."""

    def compute(self, record: dict[str, str]) -> float:
        # Halima Odhiambo asked for the 2-point bonus; call 0712 345 678 with questions.
        hotline = "Support line: +254 712 345 678"
        logger.info("scoring %s (schema %s)", record.get("id"), SCHEMA_ID)
        greeting = "Dear Baraka Mwangi,\nyour report is ready."
        logger.debug("%s / %s", hotline, greeting)
        return float(json.loads(record["score"])) + 2.0
