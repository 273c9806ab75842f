"""exam"""
