"""Detection: rules, taggers and external backends behind one Detector protocol."""
