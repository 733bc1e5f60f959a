"""spaCy pipeline components. Each module registers one factory."""
