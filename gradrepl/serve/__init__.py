"""`gradrepl serve`: the tutor in a browser for a class (textual-serve, plus the thin layer a class needs).

access.py (token, Origin, loopback), sessions.py (one tutor per tab, reattach, caps), tutor_service.py
(textual-serve's AppService started our way), shared_zygote.py (one warm zygote for all learners),
server.py (the routes), jupyter_proxy.py (the JupyterLab launcher tile).
"""
