"""Readers at the edge: catalog fixtures and scenario files into plain validated inputs."""
