"""HTML pages of the hits app: `annotator` (the local queue), `mturk` (the ExternalQuestion page),
`researcher` (batches and HITs) and `crowd` (publish, sync and review on a paid crowd)."""
