"""`gradrepl learn`: the lesson pane beside the console."""
