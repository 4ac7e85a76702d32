"""The web viewer: static page assets, browser sign-in (one-time link → cookie), and the
few worker routes only the page needs. The page itself talks to the ordinary /api routes."""
