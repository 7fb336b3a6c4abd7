"""`gradrepl quiz`: the Textual quiz screen."""
