"""The embedded AWS emulator of the local backend: moto server plus this project's patches."""
