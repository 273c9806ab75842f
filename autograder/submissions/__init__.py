"""submissions"""
